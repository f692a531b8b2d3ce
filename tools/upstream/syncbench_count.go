package upstream

import (
	"context"
	"maps"
	"path/filepath"
	"sync"

	utilexec "k8s.io/utils/exec"
	"sigs.k8s.io/knftables"
)

// execCounts counts the programs a proxy ran, by name (iptables-restore,
// iptables-save, iptables, nft). Safe for concurrent use: upstream's
// canary monitor runs in a goroutine of its own.
type execCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func newExecCounts() *execCounts { return &execCounts{n: map[string]int{}} }

func (c *execCounts) add(program string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[filepath.Base(program)] += n
}

// snapshot is a copy of the counts so far.
func (c *execCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// since is what was counted after before (programs not run are left out).
func (c *execCounts) since(before map[string]int) map[string]int {
	out := map[string]int{}
	for prog, n := range c.snapshot() {
		if d := n - before[prog]; d > 0 {
			out[prog] = d
		}
	}
	return out
}

// countingExec is upstream's exec layer (k8s.io/utils/exec) that counts
// every command it makes: what utiliptables' runner runs.
type countingExec struct {
	utilexec.Interface
	counts *execCounts
}

func (e countingExec) Command(cmd string, args ...string) utilexec.Cmd {
	e.counts.add(cmd, 1)
	return e.Interface.Command(cmd, args...)
}

func (e countingExec) CommandContext(ctx context.Context, cmd string, args ...string) utilexec.Cmd {
	e.counts.add(cmd, 1)
	return e.Interface.CommandContext(ctx, cmd, args...)
}

// countingNFT is a knftables.Interface that counts its calls that run
// `nft` (every one but NewTransaction: knftables execs nft once per Run,
// Check and List*). Both sides' nftables proxies talk to the kernel
// through it.
type countingNFT struct {
	knftables.Interface
	counts *execCounts
}

func (n countingNFT) Run(ctx context.Context, tx *knftables.Transaction) error {
	n.counts.add("nft", 1)
	return n.Interface.Run(ctx, tx)
}

func (n countingNFT) Check(ctx context.Context, tx *knftables.Transaction) error {
	n.counts.add("nft", 1)
	return n.Interface.Check(ctx, tx)
}

func (n countingNFT) ListAll(ctx context.Context) (map[string][]string, error) {
	n.counts.add("nft", 1)
	return n.Interface.ListAll(ctx)
}

func (n countingNFT) List(ctx context.Context, objectType string) ([]string, error) {
	n.counts.add("nft", 1)
	return n.Interface.List(ctx, objectType)
}

func (n countingNFT) ListRules(ctx context.Context, chain string) ([]*knftables.Rule, error) {
	n.counts.add("nft", 1)
	return n.Interface.ListRules(ctx, chain)
}

func (n countingNFT) ListElements(ctx context.Context, objectType, name string) ([]*knftables.Element, error) {
	n.counts.add("nft", 1)
	return n.Interface.ListElements(ctx, objectType, name)
}

func (n countingNFT) ListCounters(ctx context.Context) ([]*knftables.Counter, error) {
	n.counts.add("nft", 1)
	return n.Interface.ListCounters(ctx)
}

// countExecs is the Observe of svclab's kernel.ExecRunner in the
// benchmark: every program it runs counted by name, whichever of its
// methods runs it (the jumps' iptables-save and iptables-restore of a
// full sync included), as countingExec counts upstream's.
func countExecs(counts *execCounts) func(program string) {
	return func(program string) { counts.add(program, 1) }
}
