// Package scan is input for TestScanFindsPrograms: never compiled.
package scan

var setup = [][]string{{"ranged-a", "x"}, {"ranged-b"}}

func literal(ctx context.Context) {
	exec.Command("literal", "-x")
	exec.CommandContext(ctx, "ctx-literal")
	exec.LookPath("lookpath")
	cmdrun.Command("cmdrun", "a").Run(ctx)
	exec.Command("ip", "netns", "exec", "ns", "netns-exec")
	cmdrun.Command(append([]string{"ip", "netns", "exec", ns}, "in-ns")...)
	cmdrun.Command(append([]string{"appended"}, rest...)...)
	cmdrun.Command(argv()...)
	for _, args := range setup {
		cmdrun.Command(args...)
	}
	for _, args := range map[string][]string{"k": {"mapped", "-o"}} {
		exec.Command(args[0], args[1:]...)
	}
	tool := []string{"reassigned-a"}
	if x {
		tool = []string{"reassigned-b"}
	}
	exec.CommandContext(ctx, tool[0], tool[1:]...)
	exec.Command(hostprog.Debootstrap)
	exec.Command(name)
	process.Start(process.Spec{Args: []string{"spec"}})
	lab.Run("host", "shown", "-a")
	d.Command("subcommand")
}

const name = "constant"

func argv() []string { return []string{"returned", "b"} }

func fromParameter(prog string) { exec.Command(prog) }
