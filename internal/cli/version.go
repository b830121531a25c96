package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=v1.2.3".
var Version = "dev"

func init() {
	Register(&Command{
		Name:    "version",
		Usage:   "version",
		Summary: "print the playground, etcd and Go versions",
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return Usagef("takes no arguments")
			}
			etcd := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, d := range bi.Deps {
					if d.Path == "go.etcd.io/etcd/server/v3" {
						etcd = d.Version
					}
				}
			}
			fmt.Fprintf(env.Stdout, "playground %s (embedded etcd %s, %s)\n", Version, etcd, runtime.Version())
			return nil
		},
	})
}
