package selfexec

import (
	"strconv"
	"time"
)

// agnhostSeconds is a duration flag that also takes agnhost's form, whole
// seconds ("--delay-shutdown=100"), so a pod spec written for agnhost
// netexec runs unchanged on svclab's; a Go duration ("100s") works too.
type agnhostSeconds time.Duration

// Set implements pflag.Value.
func (d *agnhostSeconds) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		*d = agnhostSeconds(time.Duration(n) * time.Second)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = agnhostSeconds(v)
	return nil
}

// String implements pflag.Value.
func (d *agnhostSeconds) String() string { return time.Duration(*d).String() }

// Type implements pflag.Value: a duration, for the help and for Args.
func (d *agnhostSeconds) Type() string { return "duration" }
