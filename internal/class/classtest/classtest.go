// Package classtest starts what class-mode tests and benchmarks need: an
// in-process etcd cluster that serves clients over TLS with
// authentication on, the way a class's shared cluster is run.
package classtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/pki"
)

// RootPassword is the root user's password on clusters started here.
const RootPassword = "root-secret"

// Cluster is a TLS cluster with its CA and root's settings.
type Cluster struct {
	*embedetcd.Cluster
	Dir    string // where the certificates are
	CACert string // the CA's certificate file
	CA     *pki.CA
	// Root connects as root (once auth is on); Plain has no user.
	Root, Plain access.Settings
}

// Start starts members on loopback with certificates made for the
// occasion in dir; with auth it creates root and enables authentication.
func Start(ctx context.Context, dir string, members int, auth bool, opts ...embedetcd.Option) (*Cluster, error) {
	ca, err := pki.NewCA("playground test CA")
	if err != nil {
		return nil, err
	}
	caFile, err := ca.WriteCert(dir)
	if err != nil {
		return nil, err
	}
	srv, err := ca.Server("etcd", []string{"127.0.0.1", "localhost"})
	if err != nil {
		return nil, err
	}
	certFile, keyFile, err := srv.Write(dir, "server")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, err
	}
	opts = append([]embedetcd.Option{
		embedetcd.WithClientTLS(embedetcd.ServerTLS{CertFile: certFile, KeyFile: keyFile, CAFile: caFile}),
		embedetcd.WithDataDir(data),
		embedetcd.WithLogFile(filepath.Join(dir, "etcd.log")),
	}, opts...)
	cl, err := embedetcd.StartCluster(ctx, members, opts...)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Cluster: cl, Dir: dir, CACert: caFile, CA: ca}
	c.Plain = access.Settings{Endpoints: cl.Endpoints(), CACert: caFile}
	c.Root = c.Plain
	c.Root.User, c.Root.Password = "root", RootPassword
	if auth {
		if err := EnableAuth(ctx, c.Plain); err != nil {
			cl.Close()
			return nil, err
		}
	}
	return c, nil
}

// EnableAuth creates root with RootPassword and turns authentication on,
// through a client without a user (as on a fresh cluster).
func EnableAuth(ctx context.Context, plain access.Settings) error {
	cli, err := plain.New(nil)
	if err != nil {
		return fmt.Errorf("enable auth: %w", err)
	}
	defer cli.Close()
	return class.EnableAuth(ctx, cli, RootPassword)
}
