package embedetcd

import (
	"io"
	"os"
	"path/filepath"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/grpclog"
)

// LogPath returns where etcd and client logs go with the given options, or
// "" when they are discarded. The TUI shows it when etcd fails.
func LogPath(opts ...Option) string { return newConfig(opts).logPath() }

var (
	logMu   sync.Mutex
	loggers = map[string]*zap.Logger{}
	grpcLog sync.Once
)

// logger returns a logger that writes only to the configured file (never to
// the terminal), shared by every server and client using that file.
func (c *config) zapLogger() *zap.Logger {
	if c.logger != nil {
		return c.logger
	}
	path := c.logPath()
	logMu.Lock()
	defer logMu.Unlock()
	if lg, ok := loggers[path]; ok {
		return lg
	}
	lg := zap.NewNop()
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				enc := zap.NewProductionEncoderConfig()
				enc.EncodeTime = zapcore.ISO8601TimeEncoder
				core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(f), zapcore.WarnLevel)
				lg = zap.New(core)
			}
		}
	}
	loggers[path] = lg
	quietGRPC(path)
	return lg
}

// quietGRPC points gRPC's process-wide logger at the log file: by default it
// prints errors to stderr, which would tear through a TUI. It must run
// before any gRPC activity, so it runs once, on the first logger built.
func quietGRPC(path string) {
	grpcLog.Do(func() {
		var w io.Writer = io.Discard
		if path != "" {
			if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				w = f
			}
		}
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, w))
	})
}
