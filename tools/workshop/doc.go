// Package workshop runs svclab's classroom lessons: a lesson is data — a
// folder under clusters/lessons/<name>/ with a lesson.yaml, the lab file it
// uses, its manifests and the reference solutions of its exercises. Each
// step explains something in English, runs svclab commands and commands in
// the lab's hosts, and states what their live output must show; each
// exercise states a task, hints, and a check run against the lab's real
// state (rules, counters, conntrack, traffic through the kernel).
//
// The package has a pure part — decoding and validating lesson files
// (Parse, Load), expanding the template functions of expectations
// (Expand, with names and addresses taken from the live lab through a
// Facts), the student's progress and its JSON/HTML reports and the class
// table — and a thin live part (Runner) that runs steps and checks in a
// lab. A report is written by a student and read by the teacher, so it is
// read as hostile input (DecodeReport, ReadClass: bounded, every name a
// name, every exercise one its lesson declares), and every output passes
// names through printable: nothing in a report commands a terminal. The CLI's `svclab workshop` is built on it. It imports labs and
// proxy; labs never imports it.
package workshop
