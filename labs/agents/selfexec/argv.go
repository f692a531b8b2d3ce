package selfexec

import (
	"reflect"

	"github.com/spf13/pflag"
)

// Command is a subcommand of svclab that another svclab process runs.
// Implementations are structs used through a pointer.
type Command interface {
	// Subcommand is the subcommand path, e.g. ["proxy"] or ["node", "get"].
	Subcommand() []string
	// AddFlags binds the command's flags to the receiver's fields, with
	// their defaults.
	AddFlags(fs *pflag.FlagSet)
}

// Positional is a Command that also has positional arguments.
type Positional interface {
	Command
	// Args are the positional arguments, after the flags.
	Args() []string
}

// aliasAnnotation marks a second name of a flag (kube-proxy's
// --hostname-override for --node); Argv writes only the first name.
const aliasAnnotation = "svclab.dev/alias"

// Argv is the command line that runs c: bin, the subcommand, then every flag
// whose value is not its zero value (in the order AddFlags defines them; a
// zero field means "the flag's default"), then the positional arguments.
func Argv(bin string, c Command) []string {
	return append([]string{bin}, Args(c)...)
}

// Args is Argv without the program (for a container's `args:`).
func Args(c Command) []string {
	args := append([]string{}, c.Subcommand()...)
	fs := pflag.NewFlagSet(c.Subcommand()[0], pflag.ContinueOnError)
	fs.SortFlags = false
	// Bind the flags to a copy (binding resets fields to their defaults),
	// then give the copy c's values: the flags now read c's values.
	orig := reflect.ValueOf(c).Elem()
	bound := reflect.New(orig.Type())
	bound.Interface().(Command).AddFlags(fs)
	bound.Elem().Set(orig)
	fs.VisitAll(func(f *pflag.Flag) {
		if _, alias := f.Annotations[aliasAnnotation]; alias {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		v := f.Value.String()
		if isZero(f.Value.Type(), v) {
			return
		}
		if f.Value.Type() == "bool" && v == "true" {
			args = append(args, "--"+f.Name)
			return
		}
		args = append(args, "--"+f.Name+"="+v)
	})
	if p, ok := c.(Positional); ok {
		args = append(args, p.Args()...)
	}
	return args
}

// isZero reports whether v is the zero value of a flag of type typ: an unset
// field means "the default" to every command here.
func isZero(typ, v string) bool {
	switch typ {
	case "string":
		return v == ""
	case "bool":
		return v == "false"
	case "int", "float64":
		return v == "0"
	case "duration":
		return v == "0s"
	}
	return false
}

// markAlias marks fs's flag name as a second name of another flag.
func markAlias(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, aliasAnnotation, []string{"true"})
}
