// Package tsc reads the x86-64 time-stamp counter for mqttsession's inline
// Begin: the registry clock of kind WK_OWNER_CLOCK_TSC is this reading,
// scaled as the library publishes. (Its own package: a package that uses cgo
// cannot hold Go assembly.)
package tsc
