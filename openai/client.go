//go:build !js

package openai

import "net/http"

func defaultClient() Doer { return http.DefaultClient }
