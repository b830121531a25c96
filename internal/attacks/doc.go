// Package attacks holds the attack suite of issue 34: each test file is
// one attack a learner's lab code could make on the playground that
// grades it (a forged verified grade, a process left running, memory past
// the cap, reading or writing what the grader can), made as that code
// would make it, and states what a safe system does instead. Most attacks
// are tried twice: as a submitted file, which the import allowlist must
// refuse before anything is built, and past that check (as a learner who
// found a way around it would), where the judge, the sandbox and the
// supervisor must still hold. `make attacks` runs them.
package attacks
