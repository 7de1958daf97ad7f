package googletest

// operations is the long-running operation bookkeeping both fakes share:
// the Gemini API's and Vertex AI's Veo operations, by name, and the
// cancels answered. The fake's mu guards it.
type operations struct {
	ops     map[string]*op
	cancels int
}

type op struct {
	name     string
	polls    int
	held     bool
	failWith string
	done     bool
	result   map[string]any // "response" or "error"
	storage  any            // Vertex AI: the request's parameters.storageUri
}

func (all *operations) add(o *op) {
	if all.ops == nil {
		all.ops = map[string]*op{}
	}
	all.ops[o.name] = o
}

// release lets held operations finish on their next poll.
func (all *operations) release() {
	for _, o := range all.ops {
		if o.held {
			o.held, o.polls = false, 1<<30
		}
	}
}

// cancel ends the named operation with Google's cancelled error (one
// already done keeps its result) and counts the cancel; false when there
// is no such operation.
func (all *operations) cancel(name string) bool {
	o, ok := all.ops[name]
	if !ok {
		return false
	}
	all.cancels++
	if !o.done {
		o.done = true
		o.result = map[string]any{"error": map[string]any{"code": 1, "message": "Operation was cancelled."}}
	}
	return true
}

// due counts a read of o and says whether o finishes now: it was running,
// is not held, and has been read polls times. The caller then sets its
// result.
func (o *op) due(polls int) bool {
	if o.done {
		return false
	}
	o.polls++
	if o.held || o.polls < polls {
		return false
	}
	o.done = true
	return true
}

// json is the google.longrunning.Operation of o.
func (o *op) json() map[string]any {
	obj := map[string]any{"name": o.name}
	if o.done {
		obj["done"] = true
		for k, v := range o.result {
			obj[k] = v
		}
	}
	return obj
}
