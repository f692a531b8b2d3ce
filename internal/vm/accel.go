package vm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// kvmProbeTimeout bounds the KVM probe: a kernel under working KVM prints
// its banner within a fraction of a second.
const kvmProbeTimeout = 5 * time.Second

var accelMemo sync.Map // cache dir → accelerator verdict

// Accelerator returns "kvm" when KVM really boots img's kernel here, else
// "tcg", with the reason for the choice. $SVCLAB_VM_ACCEL (kvm or tcg)
// overrides the probe. The verdict is kept in the cache directory for the
// current host boot (/proc/sys/kernel/random/boot_id), so the probe (a
// few seconds at worst) runs once per boot.
func Accelerator(ctx context.Context, cacheDir string, img *Image) (accel, why string) {
	switch a := os.Getenv("SVCLAB_VM_ACCEL"); a {
	case "kvm", "tcg":
		return a, "SVCLAB_VM_ACCEL=" + a
	}
	if v, ok := accelMemo.Load(cacheDir); ok {
		s := v.([2]string)
		return s[0], s[1]
	}
	bootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	file := filepath.Join(cacheDir, "accel-"+strings.TrimSpace(string(bootID)))
	if data, err := os.ReadFile(file); err == nil && len(bootID) > 0 {
		a, why, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
		if a == "kvm" || a == "tcg" {
			accelMemo.Store(cacheDir, [2]string{a, why})
			return a, why
		}
	}
	accel, why = "tcg", "no usable /dev/kvm"
	if err := probeKVM(ctx, img); err == nil {
		accel, why = "kvm", "KVM probe booted the kernel"
	} else {
		why = err.Error()
	}
	if len(bootID) > 0 && ctx.Err() == nil {
		old, _ := filepath.Glob(filepath.Join(cacheDir, "accel-*"))
		for _, o := range old {
			os.Remove(o)
		}
		os.WriteFile(file, []byte(accel+" "+why+"\n"), 0o644)
	}
	if ctx.Err() == nil {
		accelMemo.Store(cacheDir, [2]string{accel, why})
	}
	return accel, why
}

// probeKVM boots img's kernel under KVM without an initramfs and waits for
// its banner on the serial console ("Linux version"), for at most
// kvmProbeTimeout. An error says why KVM is not usable.
// CLI: qemu-system-x86_64 -accel kvm -cpu host -kernel VMLINUZ -append console=ttyS0 -serial stdio …
func probeKVM(ctx context.Context, img *Image) error {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("no usable /dev/kvm: %v", err)
	}
	f.Close()
	con, err := newChannel("console")
	if err != nil {
		return err
	}
	defer con.close()
	m := machine{Accel: "kvm", Memory: 256, CPUs: 1, Kernel: img.Kernel,
		Append: "console=ttyS0 panic=-1 loglevel=8", Console: 3}
	cmd, err := qemuCommand(m.args(), []*os.File{con.child})
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	seen := make(chan struct{})
	var once sync.Once
	console := &tailBuffer{max: 8192}
	console.w = writerFunc(func([]byte) {
		if strings.Contains(console.String(), "Linux version") {
			once.Do(func() { close(seen) })
		}
	})
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("KVM probe: %w", err)
	}
	con.started()
	con.copyTo(console)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		kill(cmd)
		<-exited
	}()
	timer := time.NewTimer(kvmProbeTimeout)
	defer timer.Stop()
	select {
	case <-seen:
		return nil
	case err := <-exited:
		exited <- err
		<-con.done
		if strings.Contains(console.String(), "Linux version") {
			return nil
		}
		return fmt.Errorf("KVM probe: qemu exited (%v) before the kernel started: %s", err, firstLine(stderr.String()))
	case <-timer.C:
		return fmt.Errorf("KVM probe: the kernel printed nothing within %s under KVM", kvmProbeTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
