// Package selfexec is the one definition of the command lines that one
// svclab process starts another with: a lab's supervisors (`svclab
// supervise -- …`, the lab's kubelet), its node proxies (`svclab proxy`),
// its pod servers (`svclab netexec`), traffic from inside a lab host
// (`svclab traffic --raw`), the kind CNI agent (`svclab cni agent`) and the
// conformance suite's node agent (`svclab node …`).
//
// Each command is a struct whose AddFlags binds its flags; the CLI defines
// its flags through the same method, and every caller builds its argv with
// Argv, so a flag renamed on one side is renamed on the other (a unit test in
// tools/cli parses every command line built here).
package selfexec
