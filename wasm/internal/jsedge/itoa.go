package jsedge

import "github.com/agentrt/agentrt/internal/decimal"

// itoa formats n in decimal without strconv.
var itoa = decimal.Itoa
