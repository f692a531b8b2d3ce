package netns

import "time"

// ChangeTimes are the steps of one change of a lab's objects (an apply, a
// delete), timed: what `svclab bench apply` splits an apply into. A caller
// that wants them sets Options.Times; the change fills it in.
type ChangeTimes struct {
	// Lock is taking the lab's lock and settling a killed command's intent.
	Lock time.Duration
	// Read is reading the stored objects (and reaping finished pods).
	Read time.Duration
	// Change is running the controllers: the objects after the change.
	Change time.Duration
	// Journal is writing the journal's prepare and commit entries, and
	// starting the new pods between them.
	Journal time.Duration
	// Store is writing the changed objects and the generation.
	Store time.Duration
	// Stored is when the store held the change: the proxies' part starts.
	Stored time.Time
	// Proxies is waiting until every node's proxy acknowledged the
	// generation (its sync and the acknowledgement).
	Proxies time.Duration
	// Finish is what follows: the report, stopping gone pods, clearing
	// the journal.
	Finish time.Duration
}

// since returns the time since *start and moves *start to now.
func since(start *time.Time) time.Duration {
	now := time.Now()
	d := now.Sub(*start)
	*start = now
	return d
}

// times is where a change records its steps: opts.Times, or a throwaway.
func (o Options) times() *ChangeTimes {
	if o.Times != nil {
		return o.Times
	}
	return &ChangeTimes{}
}
