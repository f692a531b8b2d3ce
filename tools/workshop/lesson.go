package workshop

// APIVersion and Kind are the only values a lesson file's apiVersion and
// kind may have.
const (
	APIVersion = "svclab.dev/v1alpha1"
	Kind       = "Lesson"
)

// FileName is the lesson file in a lesson's folder.
const FileName = "lesson.yaml"

// Lesson is one lesson file, as written (lesson.yaml). Decoding is strict:
// an unknown field, a duplicate key or a value of the wrong kind is an
// error naming the file and the field path.
type Lesson struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// Dir is the lesson's folder (absolute); set by Load, not decoded.
	Dir string `json:"-"`
	// LabFile is Spec.Lab resolved against Dir; set by Load.
	LabFile string `json:"-"`
}

// Metadata names the lesson.
type Metadata struct {
	// Name is a DNS-1123 label; Load also requires it to be the folder's name.
	Name string `json:"name"`
}

// Spec is what the lesson teaches and runs.
type Spec struct {
	Title string `json:"title"`
	// Seed is the number of the article the lesson reproduces ("004"), or
	// empty for a lesson of its own.
	Seed string `json:"seed,omitempty"`
	// Lab is the lab file, relative to the lesson's folder; it must stay
	// inside the checkout's clusters/ folder.
	Lab string `json:"lab"`
	// CNI, when set, replaces the lab file's spec.cni (start --cni wins).
	CNI string `json:"cni,omitempty"`
	// CNIs, when set, are the CNIs the lesson is written for (its
	// templates tell them apart with {{ cni }}): start --cni takes one of
	// them, and TestLessons runs the lesson on each. CNI must be one.
	CNIs []string `json:"cnis,omitempty"`
	// Minutes is how long the lesson takes in class.
	Minutes int `json:"minutes,omitempty"`
	// VersionNotes says where the article's kube-proxy differs from
	// today's, and why.
	VersionNotes string     `json:"versionNotes,omitempty"`
	Steps        []Step     `json:"steps"`
	Exercises    []Exercise `json:"exercises,omitempty"`
}

// Step is one step of a lesson: an explanation, what it runs, and what the
// output must show.
type Step struct {
	// Name is a DNS-1123 label, unique in the lesson.
	Name    string   `json:"name"`
	Explain string   `json:"explain"`
	Run     []Action `json:"run,omitempty"`
	// Expect are checked, in order, against the step's whole output (every
	// action's output, as shown).
	Expect []Expectation `json:"expect,omitempty"`
	// Requires names what the kernel must have for the step to run (one of
	// Requirements, e.g. "ipvs"); where it lacks one the step is skipped,
	// saying why.
	Requires []string `json:"requires,omitempty"`
}

// Action is one thing a step or a solution runs: exactly one of Svclab
// (a subcommand of svclab, run in the lesson's folder with --lab added), or
// Host with Command (a program run in that lab host's network namespace).
// Every string of an action is a template (see Expand).
type Action struct {
	// Svclab is the svclab subcommand and its arguments, e.g. [apply, -f, web.yaml].
	Svclab []string `json:"svclab,omitempty"`
	// Host is a node, client, pod or "router" of the lab.
	Host string `json:"host,omitempty"`
	// Command is the argv run in Host; its program must be one of
	// HostPrograms.
	Command []string `json:"command,omitempty"`
	// Keep, when set, shows only the output lines that contain one of
	// these strings (and only they are matched by the step's Expect).
	Keep []string `json:"keep,omitempty"`
}

// Expectation is one regular expression (RE2, after template expansion)
// about a step's output: Output must match it, Absent must not.
type Expectation struct {
	Output string `json:"output,omitempty"`
	Absent string `json:"absent,omitempty"`
	// Why is said when the expectation fails (what the output should
	// have shown).
	Why string `json:"why,omitempty"`
}

// Exercise is a task the student does in the lab, checked against the
// lab's real state.
type Exercise struct {
	// Name is a DNS-1123 label, unique in the lesson.
	Name  string   `json:"name"`
	Task  string   `json:"task"`
	Hints []string `json:"hints,omitempty"`
	// Hints are given one at a time, on demand (svclab workshop hint),
	// from a nudge to the last step; a failed check never shows them.
	// Check items must all hold; the first that fails is reported by its
	// number and Why.
	Check []Check `json:"check"`
	// Solution is the reference solution the lesson ships: running it on a
	// fresh lab makes Check pass.
	Solution []Action `json:"solution"`
	// Requires, as a Step's: where the kernel lacks one, the exercise
	// cannot be done here (its check fails saying why).
	Requires []string `json:"requires,omitempty"`
}

// Check is one condition of an exercise: exactly one of a command (Svclab,
// or Host with Command) whose output must match every Expect and none of
// ExpectNot, Traffic, or ClientIP.
type Check struct {
	Svclab  []string `json:"svclab,omitempty"`
	Host    string   `json:"host,omitempty"`
	Command []string `json:"command,omitempty"`
	// Keep, as in Action, filters the output the expectations see.
	Keep      []string       `json:"keep,omitempty"`
	Expect    []string       `json:"expect,omitempty"`
	ExpectNot []string       `json:"expectNot,omitempty"`
	Traffic   *TrafficCheck  `json:"traffic,omitempty"`
	ClientIP  *ClientIPCheck `json:"clientIP,omitempty"`
	// Why says what failed, shown when the item fails; it should say what
	// is missing without giving the answer away.
	Why string `json:"why,omitempty"`
	// Reveal, when set, lets a failed item show the expression it wanted
	// (for an item whose expression is no answer to the exercise); else
	// only `svclab workshop check --verbose`, for the teacher, shows it.
	Reveal bool `json:"reveal,omitempty"`
}

// TrafficCheck sends Count connections from a lab host to a target and
// requires the split over the backends (pod names, as /hostname answers)
// to be the expected one: every connection succeeds, no other backend
// answers, and the chi-square goodness-of-fit test of labs/agents/traffic at
// significance Alpha (default traffic.DefaultAlpha, 1e-6: a correct lab
// fails this check in at most one run in a million) does not reject the
// weights.
type TrafficCheck struct {
	From string `json:"from"`
	// To is IP:PORT (a template: "{{ clusterIP \"default\" \"web\" }}:80").
	To    string `json:"to"`
	Count int    `json:"count"`
	// Expect maps backend names to their weights (the shares are the
	// weights over their sum). Either Expect or Backends.
	Expect map[string]float64 `json:"expect,omitempty"`
	// Backends, instead of Expect, asks for a uniform split over exactly
	// this many backends, whatever their names (a Deployment's pods).
	Backends int     `json:"backends,omitempty"`
	Alpha    float64 `json:"alpha,omitempty"`
	// Sequential opens the connections one after another instead of 16
	// at a time: what session affinity needs, which a proxy records when a
	// client's first connection is translated (connections racing it pick
	// an endpoint each, with kube-proxy's `recent` rules as with IPVS's
	// persistence).
	Sequential bool `json:"sequential,omitempty"`
}

// ClientIPCheck opens connections from a lab host to a target whose pods
// answer /clientip, and requires the address the pod saw to be Want:
// "client" (the From host's own address), or an IP (a template).
type ClientIPCheck struct {
	From string `json:"from"`
	To   string `json:"to"`
	Want string `json:"want"`
	// Count is how many connections (default 3); every one must show Want.
	Count int `json:"count,omitempty"`
}
