package nftables_test

import (
	"context"
	"errors"

	"sigs.k8s.io/knftables"
)

// kernelCalls counts what reached a knftables.Interface: every Run is one
// `nft` exec, every listing one `nft --json list …` exec.
type kernelCalls struct {
	// Runs are the transactions run (failed ones included), Operations
	// their commands in total.
	Runs, Operations int
	// ListAlls, Lists and ListElements count the listings by kind.
	ListAlls, Lists, ListElements int
}

// Execs is the number of nft processes the calls would start.
func (c kernelCalls) Execs() int { return c.Runs + c.Listings() }

// Listings is the number of table reads.
func (c kernelCalls) Listings() int { return c.ListAlls + c.Lists + c.ListElements }

// countingNFT is a knftables.Interface that counts the calls it passes on
// and can fail the next Run.
type countingNFT struct {
	knftables.Interface
	calls       kernelCalls
	failRun     bool
	failListAll bool
}

// errInjected is the error of a call failed by failNextRun or
// failNextListAll.
var errInjected = errors.New("injected nft failure")

// failNextListAll makes the next ListAll fail.
func (c *countingNFT) failNextListAll() { c.failListAll = true }

// failNextRun makes the next Run fail without reaching the kernel.
func (c *countingNFT) failNextRun() { c.failRun = true }

// take returns the calls since the last take and starts counting anew.
func (c *countingNFT) take() kernelCalls {
	calls := c.calls
	c.calls = kernelCalls{}
	return calls
}

func (c *countingNFT) Run(ctx context.Context, tx *knftables.Transaction) error {
	c.calls.Runs++
	c.calls.Operations += tx.NumOperations()
	if c.failRun {
		c.failRun = false
		return errInjected
	}
	return c.Interface.Run(ctx, tx)
}

func (c *countingNFT) ListAll(ctx context.Context) (map[string][]string, error) {
	c.calls.ListAlls++
	if c.failListAll {
		c.failListAll = false
		return nil, errInjected
	}
	return c.Interface.ListAll(ctx)
}

func (c *countingNFT) List(ctx context.Context, objectType string) ([]string, error) {
	c.calls.Lists++
	return c.Interface.List(ctx, objectType)
}

func (c *countingNFT) ListElements(ctx context.Context, objectType, name string) ([]*knftables.Element, error) {
	c.calls.ListElements++
	return c.Interface.ListElements(ctx, objectType, name)
}
