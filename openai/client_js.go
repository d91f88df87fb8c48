//go:build js

package openai

import (
	"errors"
	"net/http"
)

// noClient fails every request: on GOOS=js the default client is not
// linked (see Doer), so a Model there needs its Client set.
type noClient struct{}

func (noClient) Do(*http.Request) (*http.Response, error) {
	return nil, errors.New("openai: no Client set (required on GOOS=js)")
}

func defaultClient() Doer { return noClient{} }
