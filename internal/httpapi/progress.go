package httpapi

import (
	"context"

	"github.com/gengate/gengate"
)

// addProgress adds to a task record what the engine knows of the task's
// work: the route in use ("route": engine and upstream model) and the
// latest progress report ("progress": queuePosition, upstreamStatus,
// percent, logs, updatedAt), when a step stored one.
func (a *api) addProgress(ctx context.Context, body map[string]any, t *gengate.Task) {
	if t.Route.Engine != "" {
		body["route"] = map[string]any{"engine": t.Route.Engine, "upstream": t.Route.Upstream}
	}
	rep, err := a.svc.Progress(ctx, t)
	if err != nil {
		a.log.WarnContext(ctx, "read progress", "jobId", t.ID, "err", err)
		return
	}
	if rep == nil {
		return
	}
	p := map[string]any{"updatedAt": timestamp(rep.At)}
	if rep.QueuePosition != nil {
		p["queuePosition"] = *rep.QueuePosition
	}
	if rep.Status != "" {
		p["upstreamStatus"] = rep.Status
	}
	if rep.Percent != nil {
		p["percent"] = *rep.Percent
	}
	logs := rep.Logs
	if logs == nil {
		logs = []string{}
	}
	p["logs"] = logs
	body["progress"] = p
}
