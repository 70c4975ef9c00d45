module github.com/wave-orchestrator/wave-orchestrator

go 1.26.8

require (
	github.com/gofrs/flock v0.13.2
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
