package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

// Registry of Styles.
//
// Patched for the playground: the embedded XML styles are parsed on the
// first call to Get or Names rather than while the program initialises.
// Register loads them too, so a registered style still replaces an
// embedded one of the same name, as before.
var Registry = map[string]*chroma.Style{}

// Fallback style. Reassign to change the default fallback style. It is
// set to "swapoff" when the embedded styles are loaded, unless reassigned
// before then.
var Fallback *chroma.Style

var loadOnce sync.Once

func load() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			r, err := embedded.Open(file.Name())
			if err != nil {
				panic(err)
			}
			style, err := chroma.NewXMLStyle(r)
			if err != nil {
				panic(err)
			}
			Registry[style.Name] = style
			_ = r.Close()
		}
		if Fallback == nil {
			Fallback = Registry["swapoff"]
		}
	})
}

// Register a chroma.Style.
//
// It loads the embedded styles first, so that a caller who checks Registry
// and registers under its own lock (as glamour does) has the map settle
// inside that lock.
func Register(style *chroma.Style) *chroma.Style {
	load()
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	load()
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	load()
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
