// Package prefix names the key prefix a learner works under on a shared
// etcd cluster. It is separate from embedetcd so that code which only
// talks to etcd (the labs' graders) need not link the etcd server.
package prefix

import (
	"os"
	"os/user"
	"strings"
)

// Default is /playground/<user>/, from $PLAYGROUND_USER, else the login
// name, else "learner".
func Default() string {
	name := os.Getenv("PLAYGROUND_USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		name = "learner"
	}
	return For(name)
}

// For is the prefix of the learner called name: /playground/<name>/, with
// slashes and spaces in the name replaced so it stays one path element.
func For(name string) string {
	name = strings.NewReplacer("/", "_", " ", "_").Replace(name)
	return "/playground/" + name + "/"
}
