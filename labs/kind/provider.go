package kind

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/log"

	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// newProvider is kind's cluster provider on the given daemon (kind runs
// the docker CLI, which reads DOCKER_HOST).
func newProvider(d *dockerhost.Daemon, out io.Writer) *cluster.Provider {
	d.Use()
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(&logger{out: out}))
}

// logger adapts kind's log.Logger to a writer: warnings, errors and
// level-0 status lines.
type logger struct{ out io.Writer }

func (l *logger) w() io.Writer {
	if l.out == nil {
		return io.Discard
	}
	return l.out
}
func (l *logger) Warn(m string)                    { fmt.Fprintln(l.w(), "kind: WARNING:", m) }
func (l *logger) Warnf(f string, a ...any)         { l.Warn(fmt.Sprintf(f, a...)) }
func (l *logger) Error(m string)                   { fmt.Fprintln(l.w(), "kind: ERROR:", m) }
func (l *logger) Errorf(f string, a ...any)        { l.Error(fmt.Sprintf(f, a...)) }
func (l *logger) V(level log.Level) log.InfoLogger { return infoLogger{l: l, on: level <= 0} }

type infoLogger struct {
	l  *logger
	on bool
}

func (i infoLogger) Enabled() bool { return i.on }
func (i infoLogger) Info(m string) {
	if i.on {
		fmt.Fprintln(i.l.w(), "kind:", strings.TrimSpace(m))
	}
}
func (i infoLogger) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
