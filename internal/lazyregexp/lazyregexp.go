// Package lazyregexp provides regular expressions compiled on first use
// instead of at package initialisation. Every process of the binary (each
// agent's runner among them) initialises every package it links; the
// parsers' and gates' patterns cost it about half a millisecond when
// compiled up front, and most commands use none of them.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a pattern compiled the first time it is used (regexp.MustCompile:
// an invalid pattern panics then). Safe for concurrent use.
type Regexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// New returns the pattern src, not yet compiled.
func New(src string) *Regexp { return &Regexp{src: src} }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.src) })
	return r.re
}

// Regexp is the compiled pattern.
func (r *Regexp) Regexp() *regexp.Regexp { return r.get() }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.get().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.get().FindString(s) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (r *Regexp) FindStringIndex(s string) []int { return r.get().FindStringIndex(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.get().FindAllStringSubmatchIndex(s, n)
}

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}

// String is the pattern's source text, as regexp.Regexp.String; it
// compiles nothing.
func (r *Regexp) String() string { return r.src }

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.get().Match(b) }

// FindSubmatch is regexp.Regexp.FindSubmatch.
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.get().FindSubmatch(b) }
