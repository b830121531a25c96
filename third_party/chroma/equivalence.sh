#!/bin/sh
# Compares this patched chroma with the published release it was copied
# from: same lexers, styles, highlighting and analysers. Needs the Go module
# proxy. Usage: third_party/chroma/equivalence.sh [version]
set -eu
version=${1:-v2.14.0}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/main.go" <<'GO'
package main

import (
	"fmt"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/quick"
	"github.com/alecthomas/chroma/v2/styles"
)

func main() {
	// As glamour does: register its own style before highlighting.
	styles.Register(chroma.MustNewStyle("charm", chroma.StyleEntries{chroma.Keyword: "#ff0000"}))
	fmt.Println(strings.Join(lexers.Names(true), ","))
	fmt.Println(strings.Join(styles.Names(), ","))
	samples := [][2]string{
		{"go", "package main\n\nfunc main() { x := 1; _ = x }\n"},
		{"sh", "export X=1\nfor i in 1 2; do echo $i; done\n"},
		{"yaml", "a: 1\nb: [x, y]\n"},
		{"sql", "SELECT * FROM t WHERE id = 1;"},
		{"html", "<p class=x>hi</p>"},
		{"markdown", "# T\n\n```go\nx := 1\n```\n"},
		{"php", "<?php echo 1; ?>"},
		{"", "plain text"},
	}
	for _, s := range samples {
		for _, st := range []string{"charm", "monokai", "no-such-style"} {
			var b strings.Builder
			err := quick.Highlight(&b, s[1], s[0], "terminal256", st)
			fmt.Printf("%s/%s %q %v\n", s[0], st, b.String(), err)
		}
	}
	for _, txt := range []string{"@ IN SOA ns1 admin 1 2 3 4 5\n", "SELECT `a` FROM b", "#!/bin/bash\necho", "package main\nimport \"fmt\""} {
		name := "nil"
		if l := lexers.Analyse(txt); l != nil {
			name = l.Config().Name
		}
		fmt.Println("analyse", name)
	}
	fmt.Println(lexers.Match("x.go").Config().Name, lexers.MatchMimeType("text/x-python").Config().Name, lexers.Get("golang").Config().Name)
}
GO
cd "$dir"
go mod init equivalence >/dev/null 2>&1
go get "github.com/alecthomas/chroma/v2@$version" >/dev/null 2>&1
go run . >published.txt
go mod edit -replace "github.com/alecthomas/chroma/v2=$here"
go run . >patched.txt
go run -race . >patched-race.txt
if cmp -s published.txt patched.txt && cmp -s published.txt patched-race.txt; then
	echo "identical to chroma $version ($(wc -l <published.txt) lines compared)"
else
	diff published.txt patched.txt | head -20
	echo "DIFFERENT from chroma $version" >&2
	exit 1
fi
