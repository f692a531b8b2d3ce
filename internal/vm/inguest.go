package vm

import "os"

// guestEnv is set to "1" in the environment of every command run in the VM.
const guestEnv = "SVCLAB_VM"

// InGuest reports whether this process runs in svclab's VM (a command Run
// started there, or one of its children).
func InGuest() bool { return os.Getenv(guestEnv) == "1" }
