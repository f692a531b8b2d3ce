package cli

import "os"

func hostname() string {
	h, _ := os.Hostname()
	return h
}
