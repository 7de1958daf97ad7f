package gengate_test

import (
	"fmt"

	"github.com/gengate/gengate"
)

// A request is validated against the catalog and quoted before anything is
// stored or charged.
func ExampleCatalog_ParseRequest() {
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		panic(err)
	}
	req, err := catalog.ParseRequest([]byte(`{"type":"image","modelId":"flux","prompt":"a red fox","numOutputs":3}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(req.Model.ID, req.NumOutputs(), "images cost", req.Model.Quote(req.Options), "credits")

	_, err = catalog.ParseRequest([]byte(`{"type":"video","modelId":"openai-sora-2","prompt":"waves","aspectRatio":"1:1"}`))
	fmt.Println(gengate.ErrorCode(err))
	// Output:
	// flux 3 images cost 12 credits
	// UNSUPPORTED_MODEL_OPTION
}

// Video models priced per second scale from their default duration.
func ExampleModel_Quote() {
	catalog, _ := gengate.DefaultCatalog()
	sora, _ := catalog.Model("openai-sora-2")
	fmt.Println(sora.Quote(map[string]any{"duration": int64(4)}), sora.Quote(map[string]any{"duration": int64(12)}))
	// Output: 50 150
}
