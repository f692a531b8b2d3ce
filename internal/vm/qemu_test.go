package vm

import (
	"strings"
	"testing"
)

func testMachine() machine {
	return machine{
		Accel: "tcg", Memory: 2048, CPUs: 2,
		Kernel: "/c/vmlinux", Initrd: "/t/initrd.cpio", Append: kernelArgs,
		Root: "/c/root", RunDir: "/t/run",
		Shares:  []share9p{{Tag: "svclab.s0", Path: "/home/a,b", ReadOnly: false}},
		Console: 3, Ports: []port{{stdoutPort, 4}, {stderrPort, 5}},
	}
}

func TestMachineArgs(t *testing.T) {
	got := strings.Join(testMachine().args(), " ")
	for _, want := range []string{
		"-accel tcg -machine pc -cpu max -m 2048 -smp 2",
		"-nodefaults -no-user-config -display none -no-reboot -nic none",
		"-kernel /c/vmlinux -initrd /t/initrd.cpio -append " + kernelArgs,
		"-chardev socket,id=console,fd=3 -serial chardev:console",
		"-fsdev local,id=fs0,path=/c/root,security_model=none,multidevs=remap,readonly=on -device virtio-9p-pci,fsdev=fs0,mount_tag=svclab.root",
		"-fsdev local,id=fs1,path=/t/run,security_model=none,multidevs=remap -device virtio-9p-pci,fsdev=fs1,mount_tag=svclab.run",
		// a comma in a path is doubled in qemu's option syntax
		"-fsdev local,id=fs2,path=/home/a,,b,security_model=none,multidevs=remap -device virtio-9p-pci,fsdev=fs2,mount_tag=svclab.s0",
		"-device virtio-serial-pci -chardev socket,id=port0,fd=4 -device virtserialport,chardev=port0,name=svclab.stdout",
		"-chardev socket,id=port1,fd=5 -device virtserialport,chardev=port1,name=svclab.stderr",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("qemu args lack %q:\n%s", want, got)
		}
	}
	for _, banned := range []string{"-netdev", "virtio-net", "-drive", "-hda"} {
		if strings.Contains(got, banned) {
			t.Errorf("qemu args have %q: the VM must have no network device and no disk", banned)
		}
	}
}

func TestMachineArgsKVMAndProbe(t *testing.T) {
	m := testMachine()
	m.Accel = "kvm"
	if got := strings.Join(m.args(), " "); !strings.Contains(got, "-accel kvm -machine pc -cpu host") {
		t.Errorf("KVM uses the host CPU model: %s", got)
	}
	probe := machine{Accel: "kvm", Memory: 256, CPUs: 1, Kernel: "/k", Append: "console=ttyS0", Console: 3}
	got := strings.Join(probe.args(), " ")
	for _, banned := range []string{"-initrd", "-fsdev", "virtio-serial"} {
		if strings.Contains(got, banned) {
			t.Errorf("the probe machine has %q: %s", banned, got)
		}
	}
}

func TestKernelArgs(t *testing.T) {
	for _, want := range []string{"console=ttyS0", "panic=-1"} {
		if !strings.Contains(kernelArgs, want) {
			t.Errorf("kernel command line lacks %s: %s", want, kernelArgs)
		}
	}
}
