package fetch_test

import (
	"context"
	"fmt"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
)

func ExampleFetcher_Fetch() {
	f := fetch.New(fetch.Config{})
	ctx := context.Background()

	// A 2x1 PNG as a data: URL.
	in, err := f.Fetch(ctx, "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAE0lEQVR4nGL6z8DAwPAfEAAA//8HDgIB5wu+FwAAAABJRU5ErkJggg==", gengate.KindImage)
	fmt.Println(in.ContentType, in.Width, in.Height, err)

	// The cloud metadata endpoint is refused before any packet is sent.
	_, err = f.Fetch(ctx, "http://169.254.169.254/latest/meta-data/", gengate.KindImage)
	fmt.Println(err)

	// Output:
	// image/png 2 1 <nil>
	// INPUT_ADDRESS_NOT_ALLOWED: input URL resolves to a private or loopback address, which is not allowed; an operator who trusts every client can allow it with --allow-private-inputs
}
