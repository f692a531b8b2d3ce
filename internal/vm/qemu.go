package vm

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// qemuBinary is the emulator (Debian package qemu-system-x86).
const qemuBinary = "qemu-system-x86_64"

// Tags of the 9p shares every VM has, as the guest's init mounts them.
const (
	rootTag = "svclab.root" // the cached root filesystem, read-only
	runTag  = "svclab.run"  // this run's directory: command, shares, exit code
)

// kernelArgs is the guest kernel's command line. console=ttyS0 keeps the
// kernel's and init's messages on the serial port, away from the command's
// output; panic=-1 with -no-reboot makes a panic end qemu instead of
// hanging; mitigations=off saves time under emulation.
const kernelArgs = "console=ttyS0 panic=-1 mitigations=off 8250.nr_uarts=1 random.trust_cpu=on"

// machine is one qemu invocation.
type machine struct {
	Accel   string // "kvm" or "tcg"
	Memory  int    // MiB
	CPUs    int
	Kernel  string
	Initrd  string // empty for none (the KVM probe)
	Append  string // kernel command line
	Root    string // host directory shared read-only as rootTag
	RunDir  string // host directory shared read-write as runTag
	Shares  []share9p
	Console int    // child fd of the socket that gets the serial console
	Ports   []port // virtio-serial ports
}

// share9p is a host directory the guest mounts over 9p by its tag.
type share9p struct {
	Tag, Path string
	ReadOnly  bool
}

// port is a virtio-serial port, named Name in the guest
// (/sys/class/virtio-ports/vport*/name), connected to the socket that is
// the child's fd FD.
type port struct {
	Name string
	FD   int
}

// args builds qemu's command line. The VM has no devices but those listed
// here: no network device, no display, no disks.
//
//	qemu-system-x86_64 -accel tcg -machine pc -cpu max -m 2048 -smp 2 -nodefaults -no-user-config \
//	  -display none -no-reboot -nic none -kernel vmlinuz -initrd initrd.cpio -append '…' \
//	  -chardev socket,id=console,fd=3 -serial chardev:console \
//	  -fsdev local,id=fs0,path=ROOT,security_model=none,multidevs=remap,readonly=on \
//	  -device virtio-9p-pci,fsdev=fs0,mount_tag=svclab.root … \
//	  -device virtio-serial-pci -chardev socket,id=port0,fd=4 -device virtserialport,chardev=port0,name=svclab.stdout …
func (m machine) args() []string {
	cpu := "max"
	if m.Accel == "kvm" {
		cpu = "host"
	}
	a := []string{
		"-accel", m.Accel, "-machine", "pc", "-cpu", cpu,
		"-m", strconv.Itoa(m.Memory), "-smp", strconv.Itoa(m.CPUs),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-nic", "none",
		"-kernel", m.Kernel,
	}
	if m.Initrd != "" {
		a = append(a, "-initrd", m.Initrd)
	}
	a = append(a, "-append", m.Append,
		"-chardev", fmt.Sprintf("socket,id=console,fd=%d", m.Console), "-serial", "chardev:console")
	shares := []share9p{}
	if m.Root != "" {
		shares = append(shares, share9p{Tag: rootTag, Path: m.Root, ReadOnly: true})
	}
	if m.RunDir != "" {
		shares = append(shares, share9p{Tag: runTag, Path: m.RunDir})
	}
	for i, s := range append(shares, m.Shares...) {
		fsdev := fmt.Sprintf("local,id=fs%d,path=%s,security_model=none,multidevs=remap", i, qemuEscape(s.Path))
		if s.ReadOnly {
			fsdev += ",readonly=on"
		}
		a = append(a, "-fsdev", fsdev, "-device", fmt.Sprintf("virtio-9p-pci,fsdev=fs%d,mount_tag=%s", i, s.Tag))
	}
	if len(m.Ports) > 0 {
		a = append(a, "-device", "virtio-serial-pci")
		for i, p := range m.Ports {
			a = append(a, "-chardev", fmt.Sprintf("socket,id=port%d,fd=%d", i, p.FD),
				"-device", fmt.Sprintf("virtserialport,chardev=port%d,name=%s", i, p.Name))
		}
	}
	return a
}

// qemuEscape escapes a value inside qemu's comma-separated options.
func qemuEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// qemuCommand makes the qemu process: its own process group (so a kill
// reaches everything it started) and SIGKILL if this process dies first.
// files become the child's fds 3, 4, ….
func qemuCommand(args []string, files []*os.File) (*exec.Cmd, error) {
	bin, err := exec.LookPath(qemuBinary)
	if err != nil {
		return nil, fmt.Errorf("%s not found: install the Debian package qemu-system-x86 (`svclab vm prepare` does, as root)", qemuBinary)
	}
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// kill ends the qemu process group and reaps the process.
func kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Process.Kill()
}

// commandLine renders a command for error messages, quoted like a shell would.
func commandLine(name string, args []string) string {
	parts := []string{name}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}
