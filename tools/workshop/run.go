package workshop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"github.com/svclab/svclab/labs/netns"
)

// maxOutput bounds what one action's output keeps (the rest is cut, and
// said so).
const maxOutput = 1 << 20

// Runner runs a lesson's steps, checks and solutions in its live lab.
type Runner struct {
	Lesson *Lesson
	Lab    *netns.Lab
	// Binary is the svclab executable svclab actions run (default: this one).
	Binary string
	// Out receives what the student sees.
	Out io.Writer
}

func (r *Runner) facts() Facts { return LabFacts{Lab: r.Lab} }

func (r *Runner) binary() (string, error) {
	if r.Binary != "" {
		return r.Binary, nil
	}
	return os.Executable()
}

func (r *Runner) labOpts() netns.Options { return netns.Options{Binary: r.Binary} }

// ActionOutput is what one action printed, as shown.
type ActionOutput struct {
	Prompt string
	Output string
	Err    error // the command failed (exit status, or it could not start)
}

// runAction expands and runs one action, and returns its prompt line and
// its output (filtered by Keep).
func (r *Runner) runAction(ctx context.Context, a Action) (ActionOutput, error) {
	f := r.facts()
	keep, err := expandAll(a.Keep, f)
	if err != nil {
		return ActionOutput{}, err
	}
	if len(a.Svclab) > 0 {
		argv, err := expandAll(a.Svclab, f)
		if err != nil {
			return ActionOutput{}, err
		}
		return r.runSvclab(ctx, argv, keep)
	}
	host, err := Expand(a.Host, f)
	if err != nil {
		return ActionOutput{}, err
	}
	argv, err := expandAll(a.Command, f)
	if err != nil {
		return ActionOutput{}, err
	}
	return r.runHost(ctx, host, argv, keep)
}

// runSvclab runs `svclab ARGV… --lab=NAME` in the lesson's folder.
func (r *Runner) runSvclab(ctx context.Context, argv, keep []string) (ActionOutput, error) {
	bin, err := r.binary()
	if err != nil {
		return ActionOutput{}, err
	}
	args := withLab(argv, r.Lab.Name())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.Lesson.Dir
	out, runErr := combinedOutput(cmd)
	return ActionOutput{
		Prompt: "$ svclab " + strings.Join(quoteArgs(argv), " "),
		Output: filterLines(out, keep),
		Err:    runErr,
	}, nil
}

// withLab adds --lab=NAME to an svclab argv, before a "--" if there is one;
// the LabFreeCommands get none.
func withLab(argv []string, lab string) []string {
	if len(argv) > 0 && slices.Contains(LabFreeCommands, argv[0]) {
		return argv
	}
	flag := "--lab=" + lab
	for i, a := range argv {
		if a == "--" {
			return append(append(append([]string{}, argv[:i]...), flag), argv[i:]...)
		}
	}
	return append(append([]string{}, argv...), flag)
}

// runHost runs argv in a lab host's network namespace.
func (r *Runner) runHost(ctx context.Context, host string, argv, keep []string) (ActionOutput, error) {
	if len(argv) == 0 {
		return ActionOutput{}, errors.New("no command")
	}
	cmd, err := r.Lab.Command(host, argv...)
	if err != nil {
		return ActionOutput{}, err
	}
	if ctx.Err() != nil {
		return ActionOutput{}, ctx.Err()
	}
	prompt := fmt.Sprintf("[root@%s ~]# %s", host, strings.Join(quoteArgs(argv), " "))
	if len(keep) > 0 {
		prompt += " | grep -F" + strings.Join(prefixEach("-e", quoteArgs(keep)), "")
	}
	out, runErr := combinedOutput(cmd)
	return ActionOutput{Prompt: prompt, Output: filterLines(out, keep), Err: runErr}, nil
}

func prefixEach(flag string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = " " + flag + " " + a
	}
	return out
}

// combinedOutput runs cmd and returns its stdout and stderr, at most
// maxOutput bytes of them.
func combinedOutput(cmd *exec.Cmd) (string, error) {
	var b cappedBuffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	out := b.String()
	if b.cut {
		out += fmt.Sprintf("\n… (output cut at %d bytes)\n", maxOutput)
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	return out, err
}

// cappedBuffer keeps the first maxOutput bytes written to it and drops
// the rest (a command keeps running to its end).
type cappedBuffer struct {
	strings.Builder
	cut bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); len(p) > room {
		b.cut = true
		b.Builder.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Builder.Write(p)
}

// filterLines keeps the lines of out that contain one of keep (all lines
// when keep is empty), without the trailing newline.
func filterLines(out string, keep []string) string {
	out = strings.TrimRight(out, "\n")
	if len(keep) == 0 {
		return out
	}
	var kept []string
	for _, line := range strings.Split(out, "\n") {
		for _, k := range keep {
			if strings.Contains(line, k) {
				kept = append(kept, line)
				break
			}
		}
	}
	return strings.Join(kept, "\n")
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \"'|*$;&()<>\\{}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// matches compiles an expanded expectation in multi-line mode (^ and $
// match at line boundaries) and matches it against text.
func matches(pattern, text string) (bool, error) {
	re, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		return false, fmt.Errorf("expectation %q: %w", pattern, err)
	}
	return re.MatchString(text), nil
}

// hostOf is the IP of an ip:port (or an IP).
func hostOf(s string) string {
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}
