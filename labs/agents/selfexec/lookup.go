package selfexec

import "github.com/spf13/pflag"

// Lookup is `svclab lookup [--type A|AAAA|CNAME] NAME`: what the resolver of
// the pod (or host) it runs in answers for NAME, as JSON
// (dnslookup.Answer). The conformance suite runs it in a pod through
// `kubectl exec`, or in a lab pod's namespace.
type Lookup struct {
	// Name is the name to look up, expanded with the resolver's search
	// list.
	Name string
	// Type is the query type: A (the default), AAAA or CNAME.
	Type string
}

// Subcommand implements Command.
func (*Lookup) Subcommand() []string { return []string{"lookup"} }

// AddFlags implements Command.
func (l *Lookup) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&l.Type, "type", "", "query type: A, AAAA or CNAME (default A)")
}

// Args implements Positional.
func (l *Lookup) Args() []string { return []string{l.Name} }
