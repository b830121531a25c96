// Package depsprobe pins the chosen dependencies in go.mod until real packages import them; delete it once every import below is used elsewhere.
package depsprobe

import (
	_ "charm.land/bubbles/v2/viewport"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/glamour/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/anishathalye/porcupine"
	_ "github.com/charmbracelet/x/exp/golden"
	_ "github.com/charmbracelet/x/exp/teatest/v2"
	_ "github.com/fsnotify/fsnotify"
	_ "go.etcd.io/etcd/client/v3"
	_ "go.etcd.io/etcd/client/v3/concurrency"
	_ "go.etcd.io/etcd/client/v3/namespace"
	_ "go.etcd.io/etcd/pkg/v3/proxy"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "go.uber.org/zap"
	_ "go.yaml.in/yaml/v3"
)
