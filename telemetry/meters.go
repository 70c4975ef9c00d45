package telemetry

import (
	"go.opentelemetry.io/otel/metric"
)

// Metric names (docs/observability.md).
const (
	MetricRuns            = "wave.agent.runs"
	MetricRunDuration     = "wave.agent.run.duration"
	MetricTokens          = "wave.agent.tokens"
	MetricCost            = "wave.agent.cost"
	MetricWaves           = "wave.waves"
	MetricMerges          = "wave.backlog.merges"
	MetricParks           = "wave.backlog.parks"
	MetricNeedsInput      = "wave.backlog.needs_input"
	MetricQueueDepth      = "wave.backlog.queue.depth"
	MetricInFlight        = "wave.backlog.in_flight"
	MetricGitHubCalls     = "wave.github.calls"
	MetricRateLimitWaits  = "wave.github.rate_limit.waits"
	MetricTransientWaits  = "wave.transient.waits"
	MetricTransientWaited = "wave.transient.wait.duration"
)

// meters are the instruments the followers record into.
type meters struct {
	runs, waves, tokens                metric.Int64Counter
	merges, parks, needsInput          metric.Int64Counter
	ghCalls, rateWaits, transientWaits metric.Int64Counter
	cost, transientWaited              metric.Float64Counter
	duration                           metric.Float64Histogram
	queue, inFlight                    metric.Int64Gauge
}

func newMeters(m metric.Meter) (*meters, error) {
	var ms meters
	var errs []error
	i64 := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64Gauge {
		g, err := m.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	ms.runs = i64(MetricRuns, "{run}", "Agent runs (wave agents and backlog workers) that ended, by outcome and executor.")
	ms.waves = i64(MetricWaves, "{wave}", "Wave runs that ended, by outcome.")
	ms.tokens = i64(MetricTokens, "{token}", "Tokens the ended agent runs spent, by kind (input, output, cache_read, cache_write).")
	ms.merges = i64(MetricMerges, "{issue}", "Issues merged into a backlog run's wave branch.")
	ms.parks = i64(MetricParks, "{issue}", "Issues a backlog run parked.")
	ms.needsInput = i64(MetricNeedsInput, "{issue}", "Backlog workers that asked a person a question.")
	ms.ghCalls = i64(MetricGitHubCalls, "{request}", "GitHub API requests a backlog run made.")
	ms.rateWaits = i64(MetricRateLimitWaits, "{wait}", "Times a backlog run waited out a GitHub rate limit.")
	ms.transientWaits = i64(MetricTransientWaits, "{wait}", "Transient failures (origin or GitHub unreachable, disk full) a backlog run waited out, by cause.")
	var err error
	ms.cost, err = m.Float64Counter(MetricCost, metric.WithUnit("USD"), metric.WithDescription("What the ended agent runs cost."))
	errs = append(errs, err)
	ms.transientWaited, err = m.Float64Counter(MetricTransientWaited, metric.WithUnit("s"), metric.WithDescription("Time spent waiting out transient failures."))
	errs = append(errs, err)
	ms.duration, err = m.Float64Histogram(MetricRunDuration, metric.WithUnit("s"), metric.WithDescription("How long the ended agent runs ran."),
		metric.WithExplicitBucketBoundaries(1, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400))
	errs = append(errs, err)
	ms.queue = gauge(MetricQueueDepth, "{issue}", "Issues of the backlog run ready and waiting for their merge.")
	ms.inFlight = gauge(MetricInFlight, "{issue}", "Issues of the backlog run being worked on.")
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return &ms, nil
}
