package selfexec

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"
)

// addrSliceValue is a repeatable flag of IP addresses ([]netip.Addr), given
// as --flag=A --flag=B or --flag=A,B.
type addrSliceValue struct{ addrs *[]netip.Addr }

var _ pflag.SliceValue = addrSliceValue{}

func addrSliceVar(fs *pflag.FlagSet, p *[]netip.Addr, name, usage string) {
	fs.Var(addrSliceValue{p}, name, usage)
}

func (v addrSliceValue) String() string { return "[" + strings.Join(v.GetSlice(), ",") + "]" }

func (v addrSliceValue) Type() string { return "ipSlice" }

func (v addrSliceValue) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		if err := v.Append(part); err != nil {
			return err
		}
	}
	return nil
}

func (v addrSliceValue) Append(s string) error {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return fmt.Errorf("%q is not an IP address", s)
	}
	*v.addrs = append(*v.addrs, a)
	return nil
}

func (v addrSliceValue) Replace(ss []string) error {
	*v.addrs = nil
	for _, s := range ss {
		if err := v.Append(s); err != nil {
			return err
		}
	}
	return nil
}

func (v addrSliceValue) GetSlice() []string {
	out := make([]string, len(*v.addrs))
	for i, a := range *v.addrs {
		out[i] = a.String()
	}
	return out
}
