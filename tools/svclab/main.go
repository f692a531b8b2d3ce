// Command svclab is the lab and test harness for Kubernetes Service
// networking: it creates labs, applies manifests to them, runs traffic
// through them, and is also the embedded proxy and the pods' server that
// run inside a lab.
package main

import (
	"os"

	"github.com/svclab/svclab/tools/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
