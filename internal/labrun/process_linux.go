package labrun

import "syscall"

// setParentDeathSignal kills a replica process when the playground dies
// without stopping it (kill -9): no orphan keeps campaigning.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
