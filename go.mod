module github.com/agentrt/agentrt

go 1.26

require (
	github.com/syumai/workers v0.33.0
	github.com/tetratelabs/wazero v1.12.0
)

require golang.org/x/sys v0.44.0 // indirect
