package backlog

import "time"

// Issue is one backlog item as every source reports it.
type Issue struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Labels    []string  `json:"labels"`
	State     string    `json:"state"` // "open" | "closed"
	CreatedAt time.Time `json:"createdAt"`
	URL       string    `json:"url"`      // html URL (github) or file path (local)
	Comments  []Comment `json:"comments"` // filled by Source.Get; ListOpen may leave nil
}

// Comment is one comment on an issue.
type Comment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"createdAt"`
}
