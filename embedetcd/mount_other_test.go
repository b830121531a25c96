//go:build !linux

package embedetcd

import "errors"

func mountTmpfs(string, string) error { return errors.New("tmpfs is Linux only") }

func unmount(string) {}
