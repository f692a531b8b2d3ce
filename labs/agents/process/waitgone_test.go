package process

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestWaitGoneWaitsForTheExit: WaitGone of a running process gives up at
// its bound and says so; once the process is killed it returns that it is
// gone — while the exited child is still a zombie (not reaped yet), as a
// process the waiter did not start would be — and a pid that no longer
// exists is gone at once. pollGone, the fallback without pidfds, agrees.
func TestWaitGoneWaitsForTheExit(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // cleanup
	if WaitGone([]int{pid}, 20*time.Millisecond) {
		t.Fatal("WaitGone says a running sleep is gone")
	}
	if pollGone([]int{pid}, time.Now().Add(20*time.Millisecond)) {
		t.Fatal("pollGone says a running sleep is gone")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !WaitGone([]int{pid}, time.Minute) {
		t.Fatal("WaitGone did not see the killed sleep exit within a minute")
	}
	if !pollGone([]int{pid}, time.Now().Add(time.Minute)) {
		t.Fatal("pollGone does not count the killed sleep (a zombie) as gone")
	}
	cmd.Wait() //nolint:errcheck // killed
	if !WaitGone([]int{pid}, 0) {
		t.Error("WaitGone of a reaped pid is not gone at once")
	}
}
