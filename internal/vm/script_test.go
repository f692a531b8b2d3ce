package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The command script survives any argument: it is run here by the host's
// sh (the guest runs it with busybox sh, also POSIX) with printf as the
// command.
func TestCommandScriptQuoting(t *testing.T) {
	args := []string{"a b", "it's", "$HOME", "`id`", "\"q\"", "back\\slash", "", "new\nline", "*", "-n"}
	dir := filepath.Join(t.TempDir(), "made by the script")
	script, err := commandScript(append([]string{"printf", "[%s]\\n"}, args...),
		map[string]string{"FOO": "x'y $z", "EMPTY": ""}, dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cmd.sh")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", file).CombinedOutput()
	if err != nil {
		t.Fatalf("sh %s: %v\n%s\nscript:\n%s", file, err, out, script)
	}
	var want strings.Builder
	for _, a := range args {
		want.WriteString("[" + a + "]\n")
	}
	if string(out) != want.String() {
		t.Fatalf("got\n%s\nwant\n%s\nscript:\n%s", out, want.String(), script)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the working directory is made: %v", err)
	}

	envScript, _ := commandScript([]string{"sh", "-c", `printf '%s|%s|%s' "$FOO" "$EMPTY" "$PWD"`},
		map[string]string{"FOO": "x'y $z", "EMPTY": ""}, dir)
	os.WriteFile(file, []byte(envScript), 0o644)
	out, err = exec.Command("sh", file).CombinedOutput()
	if err != nil || string(out) != "x'y $z||"+dir {
		t.Fatalf("environment and directory: %q, %v", out, err)
	}
}

func TestCommandScriptErrors(t *testing.T) {
	if _, err := commandScript(nil, nil, "/"); err == nil {
		t.Error("no command is an error")
	}
	if _, err := commandScript([]string{"true"}, nil, "relative"); err == nil {
		t.Error("a relative working directory is an error")
	}
	if _, err := commandScript([]string{"true"}, map[string]string{"A-B": "1"}, "/"); err == nil {
		t.Error("a bad environment name is an error")
	}
}

func TestSharesFile(t *testing.T) {
	got := sharesFile([]share9p{{Tag: "svclab.s0", Path: "/h", ReadOnly: true}, {Tag: "svclab.s1", Path: "/g"}},
		[]string{"/ro", "/with space"})
	if want := "svclab.s0\t/ro\tro\nsvclab.s1\t/with space\trw\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
