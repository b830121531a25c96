//go:build linux

package guard

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The sandbox. On Linux the judge starts the test binary through this
// program once more (SandboxEnv set): that small step restricts itself
// with Landlock and then replaces itself with the test binary, so the
// restriction binds the binary from its first instruction, the lab's
// init functions included, and everything it could start. What it may
// do: read and run the test binary, read the lab's package folder, the
// system's shared libraries and name-service files, its own /proc entry;
// read and write a temporary folder of its own and /dev/null; connect
// over TCP to the etcd ports it was given and the local ephemeral ports
// (where the tests' own fault proxies listen), and bind only ephemeral
// ports. Landlock's scopes (ABI 6) also keep it from signalling or
// tracing any process outside the sandbox (the supervisor, the judge, the
// grader), which closes /proc/<pid>/environ and /proc/<pid>/mem of its
// ancestors too. Landlock filters TCP by port, not by address: that is
// the limit of "loopback only" here, and the allowlist (no net in a lab
// file) is what keeps a lab from opening sockets of its own.

// sandboxSpec is what the sandboxed test binary may use.
type sandboxSpec struct {
	Exec      []string  `json:"exec"`  // files to run: the test binary and its loader
	Read      []string  `json:"read"`  // files and folders to read
	Write     []string  `json:"write"` // folders to read and write
	Connect   []uint16  `json:"connect"`
	Ephemeral [2]uint16 `json:"ephemeral"` // the local port range, inclusive
}

// systemReads are the system files a Go test binary may need: the
// dynamic loader and libc (a binary linked with cgo's resolver), time
// zones, and the resolver's configuration. None holds a secret.
var systemReads = []string{
	"/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64",
	"/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo",
	"/etc/hosts", "/etc/nsswitch.conf", "/etc/resolv.conf", "/etc/host.conf", "/etc/gai.conf",
	"/dev/urandom",
}

// sandboxedCommand is the command that runs the test binary args[0]
// (with args[1:]) inside the sandbox, with tmp as its only writable
// folder.
func sandboxedCommand(args []string, tmp string) (*exec.Cmd, error) {
	if LandlockABI() < 1 {
		return plainCommand(args, tmp), nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	bin, err := filepath.Abs(args[0])
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	wd, _ := os.Getwd()
	env := labEnv(os.Environ(), tmp)
	spec := sandboxSpec{
		Exec:      append([]string{bin}, interpreter(bin)...),
		Read:      append([]string{wd}, systemReads...),
		Write:     []string{tmp},
		Ephemeral: ephemeralPorts(),
	}
	spec.addEtcd(env)
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd := exec.Command(self, append([]string{bin}, args[1:]...)...)
	cmd.Env = append(env, SandboxEnv+"="+string(data))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// addEtcd lets the binary reach the etcd its environment names (the
// grader's, or a class cluster's for a learner's own grade) and read the
// class cluster's certificates.
func (s *sandboxSpec) addEtcd(env []string) {
	getenv := func(name string) string {
		for _, kv := range env {
			if n, v, _ := strings.Cut(kv, "="); n == name {
				return v
			}
		}
		return ""
	}
	var eps []string
	for _, name := range []string{"PLAYGROUND_GRADER_ETCD", "PLAYGROUND_ETCD_ENDPOINTS"} {
		eps = append(eps, strings.FieldsFunc(getenv(name), func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	for _, name := range []string{"PLAYGROUND_ETCD_CACERT", "PLAYGROUND_ETCD_CERT", "PLAYGROUND_ETCD_KEY", "PLAYGROUND_CLASS"} {
		if f := getenv(name); f != "" {
			s.Read = append(s.Read, f)
		}
	}
	for _, ep := range eps {
		if !strings.Contains(ep, "://") {
			ep = "http://" + ep
		}
		if u, err := url.Parse(ep); err == nil {
			if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
				s.Connect = append(s.Connect, uint16(p))
			}
		}
	}
}

// ephemeralPorts is the kernel's local port range (the default when it
// cannot be read).
func ephemeralPorts() [2]uint16 {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	f := strings.Fields(string(data))
	if err == nil && len(f) == 2 {
		lo, err1 := strconv.ParseUint(f[0], 10, 16)
		hi, err2 := strconv.ParseUint(f[1], 10, 16)
		if err1 == nil && err2 == nil && lo <= hi {
			return [2]uint16{uint16(lo), uint16(hi)}
		}
	}
	return [2]uint16{32768, 60999}
}

// sandboxMain restricts this process as spec says and becomes the test
// binary args[0]. It returns only when that fails: then nothing runs.
func sandboxMain(args []string, specJSON string) int {
	var spec sandboxSpec
	if len(args) == 0 || json.Unmarshal([]byte(specJSON), &spec) != nil {
		fmt.Fprintln(os.Stderr, "playground-sandbox: no test binary or no sandbox")
		return 2
	}
	// The thread that restricts itself is the one that calls exec: the
	// test binary starts with its restrictions, and this program, which
	// ends there, needs them on no other thread.
	runtime.LockOSThread()
	if err := spec.restrict(); err != nil {
		fmt.Fprintf(os.Stderr, "playground-sandbox: Landlock: %v\n", err)
		return 2
	}
	env := withoutEnv(os.Environ(), SandboxEnv)
	err := syscall.Exec(args[0], args, env)
	fmt.Fprintf(os.Stderr, "playground-sandbox: run the test binary: %v\n", err)
	return 2
}

// restrict applies spec's Landlock rules to the calling thread, which
// must be locked to its goroutine and exec next.
func (s sandboxSpec) restrict() error {
	fd, flags, err := landlock.V7.BestEffort().NewRulesetFD(s.rules()...)
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	if err := s.addEphemeral(fd); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return llsys.LandlockRestrictSelf(fd, flags)
}

// addEphemeral lets the binary connect to every local ephemeral port,
// one rule a port: some 28,000 of them. They are added here, a system
// call each, rather than as go-landlock rules, which cost twice as much
// CPU for that many (measured: 0.1 s a sandbox, on a two-core machine
// that grades twice a lab).
func (s sandboxSpec) addEphemeral(fd int) error {
	if LandlockABI() < 4 {
		return nil // no network rules: SandboxNote says so
	}
	attr := llsys.NetPortAttr{AllowedAccess: uint64(llsys.AccessNetConnectTCP)}
	for p := int(s.Ephemeral[0]); p <= int(s.Ephemeral[1]) && p > 0; p++ {
		attr.Port = uint64(p)
		if err := llsys.LandlockAddNetPortRule(fd, &attr, 0); err != nil {
			return fmt.Errorf("allow port %d: %w", p, err)
		}
	}
	return nil
}

// Access rights the rules below grant (all handled by landlock.V7).
const (
	readRights  = llsys.AccessFSReadFile | llsys.AccessFSReadDir
	writeRights = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSym | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSTruncate
	fileRights = llsys.AccessFSReadFile | llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSExecute
)

// rules are spec's Landlock rules but the ephemeral ports
// (addEphemeral): nothing is executable but the test binary and its
// loader (not even what the tests write in their folder).
func (s sandboxSpec) rules() []landlock.Rule {
	var rules []landlock.Rule
	add := func(rights landlock.AccessFSSet, paths ...string) {
		for _, p := range paths {
			info, err := os.Stat(p)
			if err != nil {
				continue
			}
			if !info.IsDir() {
				rights &= fileRights
			}
			rules = append(rules, landlock.PathAccess(rights, p))
		}
	}
	add(llsys.AccessFSExecute|llsys.AccessFSReadFile, s.Exec...)
	add(readRights, s.Read...)
	add(readRights, fmt.Sprintf("/proc/%d", os.Getpid()))
	add(readRights|writeRights, s.Write...)
	add(llsys.AccessFSReadFile|llsys.AccessFSWriteFile, "/dev/null")
	rules = append(rules, landlock.BindTCP(0))
	for _, p := range s.Connect {
		rules = append(rules, landlock.ConnectTCP(p))
	}
	return rules
}

// interpreter names the dynamic loader of the program at bin (none for a
// static binary).
func interpreter(bin string) []string {
	f, err := elf.Open(bin)
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
		if err == nil {
			return []string{strings.TrimRight(string(data), "\x00")}
		}
	}
	return nil
}

// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
