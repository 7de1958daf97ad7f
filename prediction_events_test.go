package gengate_test

import (
	"slices"
	"testing"

	"github.com/gengate/gengate"
)

// TestPredictionEvents: a webhook_events_filter is kept in one order
// without repeats or unknown names; a prediction's start, output and
// logs events get one attempt, every other event the retry schedule; a
// state change writes output and completed on success, completed on
// failure or cancel, nothing for review.
func TestPredictionEvents(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"completed", "start", "completed", "sideways"}, []string{"start", "completed"}},
		{[]string{"logs", "output", "start", "completed"}, gengate.PredictionEvents},
		{[]string{}, nil},
	} {
		if got := gengate.PredictionFilter(c.in); !slices.Equal(got, c.want) {
			t.Errorf("PredictionFilter(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for typ, want := range map[string]bool{
		"prediction.start": false, "prediction.output": false, "prediction.logs": false,
		"prediction.completed": true, gengate.EventSucceeded: true, gengate.EventNeedsReview: true,
	} {
		if got := gengate.WebhookRetried(typ); got != want {
			t.Errorf("WebhookRetried(%s) = %v, want %v", typ, got, want)
		}
	}
	for s, want := range map[gengate.Status][]string{
		gengate.StatusSucceeded: {"output", "completed"}, gengate.StatusFailed: {"completed"},
		gengate.StatusCanceled: {"completed"}, gengate.StatusNeedsReview: nil, gengate.StatusRunning: nil,
	} {
		if got := gengate.PredictionFinalEvents(s); !slices.Equal(got, want) {
			t.Errorf("PredictionFinalEvents(%s) = %q, want %q", s, got, want)
		}
	}
	if ev, ok := gengate.PredictionEvent(gengate.PredictionEventType("logs")); !ok || ev != "logs" {
		t.Errorf("PredictionEvent(PredictionEventType(logs)) = %q, %v", ev, ok)
	}
}

// TestFalEvents: a fal queue request's webhook is kept as FalWebhookEvents
// (not read as a prediction filter naming nothing), writes fal.completed
// on success, failure and cancel and nothing for review, and is retried
// on the schedule.
func TestFalEvents(t *testing.T) {
	if got := gengate.WebhookFilter(gengate.FalWebhookEvents); !slices.Equal(got, gengate.FalWebhookEvents) {
		t.Errorf("WebhookFilter(FalWebhookEvents) = %q", got)
	}
	if got := gengate.WebhookFilter([]string{"fal", "start"}); !slices.Equal(got, []string{"start"}) {
		t.Errorf(`WebhookFilter(["fal", "start"]) = %q, want a prediction's ["start"]`, got)
	}
	for s, want := range map[gengate.Status]string{
		gengate.StatusSucceeded: gengate.FalCompleted, gengate.StatusFailed: gengate.FalCompleted,
		gengate.StatusCanceled: gengate.FalCompleted, gengate.StatusNeedsReview: "", gengate.StatusRunning: "",
	} {
		if got := gengate.FalFinalEvent(s); got != want {
			t.Errorf("FalFinalEvent(%s) = %q, want %q", s, got, want)
		}
	}
	if !gengate.WebhookRetried(gengate.FalCompleted) {
		t.Error("fal.completed is not retried")
	}
}
