package deliverytag

import (
	"fmt"

	"github.com/wukongim/wkcore/go/internal/status"
)

// The delivery-tag codes of the C ABI (300–399); the cgo build checks them
// against the header, both builds' tests against testdata/tag/statuses.json
// when it is there.
const (
	codeInvalidUTF8                 status.Code = 300
	codeTooLarge                    status.Code = 301
	codeUnassignedSlot              status.Code = 302
	codeLengthMismatch              status.Code = 303
	codeInvalidConfig               status.Code = 304
	codeUnknownOp                   status.Code = 305
	codeDirty                       status.Code = 306
	codeLagging                     status.Code = 307
	codeInvalidFrame                status.Code = 310
	codeInvalidRequestCodec         status.Code = 311
	codeInvalidResponseCodec        status.Code = 312
	codeShortUvarint                status.Code = 313
	codeInvalidUvarint              status.Code = 314
	codeShortBytes                  status.Code = 315
	codeShortChannelType            status.Code = 316
	codeShortVarint                 status.Code = 317
	codeInvalidVarint               status.Code = 318
	codeTrailingRequestBytes        status.Code = 319
	codeTrailingResponseBytes       status.Code = 320
	codeRefsCountOverflowsInt       status.Code = 321
	codePartitionsCountOverflowsInt status.Code = 322
	codeUIDsCountOverflowsInt       status.Code = 323
	codeRefsCountExceeds            status.Code = 324
	codePartitionsCountExceeds      status.Code = 325
	codeUIDsCountExceeds            status.Code = 326
)

// The package's errors. Every call returns these values themselves (or, for
// ErrUnknownOp, an error wrapping it); match with errors.Is, never by text.
var (
	// ErrInvalidUTF8: a channel key, tag key or source key that is not
	// UTF-8 (UIDs may be any bytes). Nothing changed.
	ErrInvalidUTF8 error = errInvalidUTF8
	// ErrTooLarge: a partition whose UIDs pass 2^32-1 bytes in all.
	ErrTooLarge error = errTooLarge
	// ErrUnassignedSlot: a UID whose hash slot has no known node (the build
	// is retryable once the slot table knows it).
	ErrUnassignedSlot error = errUnassignedSlot
	// ErrLengthMismatch: a UID list and its slot list of different lengths.
	ErrLengthMismatch error = errLengthMismatch
	// ErrInvalidConfig: an option out of range (a LocalNodeID of 0).
	ErrInvalidConfig error = errInvalidConfig
	// ErrUnknownOp: a service-44 request whose op is neither get, update
	// nor empty. HandleRPC returns an error wrapping it whose text is
	// upstream's: access/node: unknown delivery tag op "<op>".
	ErrUnknownOp error = errUnknownOp
	// ErrDirty: Leader.Usable found a membership change of the channel
	// pending, or one that failed since its last build: rebuild.
	ErrDirty error = errDirty
	// ErrLagging: Leader.Usable found the tag's subscriber mutation version
	// below the store's: rebuild.
	ErrLagging error = errLagging
	// ErrInvalidFrame: a service-44 frame that does not decode. Every
	// decode error below matches it too (errors.Is), and carries
	// upstream's text.
	ErrInvalidFrame error = errInvalidFrame
	// ErrInvalidRequestCodec: a request without the WKDT\x01 magic.
	ErrInvalidRequestCodec error = errInvalidRequestCodec
	// ErrInvalidResponseCodec: a response without the WKDG\x01 magic.
	ErrInvalidResponseCodec error = errInvalidResponseCodec
	// ErrShortUvarint: a truncated unsigned varint.
	ErrShortUvarint error = errShortUvarint
	// ErrInvalidUvarint: a malformed unsigned varint.
	ErrInvalidUvarint error = errInvalidUvarint
	// ErrShortBytes: a truncated string.
	ErrShortBytes error = errShortBytes
	// ErrShortChannelType: a request without its channel type byte.
	ErrShortChannelType error = errShortChannelType
	// ErrShortVarint: a truncated signed varint.
	ErrShortVarint error = errShortVarint
	// ErrInvalidVarint: a malformed signed varint.
	ErrInvalidVarint error = errInvalidVarint
	// ErrTrailingRequestBytes: bytes after a request's tag.
	ErrTrailingRequestBytes error = errTrailingRequestBytes
	// ErrTrailingResponseBytes: bytes after a response's tag.
	ErrTrailingResponseBytes error = errTrailingResponseBytes
	// ErrRefsCountOverflowsInt, ErrPartitionsCountOverflowsInt and
	// ErrUIDsCountOverflowsInt: a collection count above the largest int.
	ErrRefsCountOverflowsInt       error = errRefsCountOverflowsInt
	ErrPartitionsCountOverflowsInt error = errPartitionsCountOverflowsInt
	ErrUIDsCountOverflowsInt       error = errUIDsCountOverflowsInt
	// ErrRefsCountExceeds, ErrPartitionsCountExceeds and ErrUIDsCountExceeds:
	// a collection count above the bytes that remain.
	ErrRefsCountExceeds       error = errRefsCountExceeds
	ErrPartitionsCountExceeds error = errPartitionsCountExceeds
	ErrUIDsCountExceeds       error = errUIDsCountExceeds
)

// Generic errors, shared by every wkcore package.
var (
	// ErrHandleClosed is returned by every method after Close, and by a
	// nil or zero-value handle.
	ErrHandleClosed = status.ErrHandleClosed
	// ErrInvalidArgument: an argument refused (a negative cleanup limit, a
	// Mutation used after Commit or Abandon).
	ErrInvalidArgument error = status.ErrInvalidArgument
	// ErrNotFound: Leader.Usable found no tag for the channel.
	ErrNotFound error = status.ErrNotFound
)

var (
	errInvalidUTF8    = status.New(codeInvalidUTF8, "deliverytag: key is not UTF-8")
	errTooLarge       = status.New(codeTooLarge, "deliverytag: uid list too large")
	errUnassignedSlot = status.New(codeUnassignedSlot, "deliverytag: uid slot has no assigned node")
	errLengthMismatch = status.New(codeLengthMismatch, "deliverytag: uid and slot lists differ in length")
	errInvalidConfig  = status.New(codeInvalidConfig, "deliverytag: invalid configuration")
	errUnknownOp      = status.New(codeUnknownOp, "access/node: unknown delivery tag op")
	errDirty          = status.New(codeDirty, "deliverytag: tag has a pending or failed mutation")
	errLagging        = status.New(codeLagging, "deliverytag: tag lags the subscriber store")
	errInvalidFrame   = status.New(codeInvalidFrame, "access/node: invalid delivery tag frame")

	errInvalidRequestCodec   = frameError(codeInvalidRequestCodec, "invalid delivery tag request codec")
	errInvalidResponseCodec  = frameError(codeInvalidResponseCodec, "invalid delivery tag response codec")
	errShortUvarint          = frameError(codeShortUvarint, "short uvarint")
	errInvalidUvarint        = frameError(codeInvalidUvarint, "invalid uvarint")
	errShortBytes            = frameError(codeShortBytes, "short bytes")
	errShortChannelType      = frameError(codeShortChannelType, "short delivery tag channel type")
	errShortVarint           = frameError(codeShortVarint, "short varint")
	errInvalidVarint         = frameError(codeInvalidVarint, "invalid varint")
	errTrailingRequestBytes  = frameError(codeTrailingRequestBytes, "trailing delivery tag request bytes")
	errTrailingResponseBytes = frameError(codeTrailingResponseBytes, "trailing delivery tag response bytes")

	errRefsCountOverflowsInt       = frameError(codeRefsCountOverflowsInt, labelRefs+" count overflows int")
	errPartitionsCountOverflowsInt = frameError(codePartitionsCountOverflowsInt, labelPartitions+" count overflows int")
	errUIDsCountOverflowsInt       = frameError(codeUIDsCountOverflowsInt, labelUIDs+" count overflows int")
	errRefsCountExceeds            = frameError(codeRefsCountExceeds, labelRefs+" count exceeds remaining bytes")
	errPartitionsCountExceeds      = frameError(codePartitionsCountExceeds, labelPartitions+" count exceeds remaining bytes")
	errUIDsCountExceeds            = frameError(codeUIDsCountExceeds, labelUIDs+" count exceeds remaining bytes")

	registeredTagErrors = []*status.Error{errInvalidUTF8, errTooLarge, errUnassignedSlot, errLengthMismatch,
		errInvalidConfig, errUnknownOp, errDirty, errLagging, errInvalidFrame, errInvalidRequestCodec,
		errInvalidResponseCodec, errShortUvarint, errInvalidUvarint, errShortBytes, errShortChannelType,
		errShortVarint, errInvalidVarint, errTrailingRequestBytes, errTrailingResponseBytes,
		errRefsCountOverflowsInt, errPartitionsCountOverflowsInt, errUIDsCountOverflowsInt, errRefsCountExceeds,
		errPartitionsCountExceeds, errUIDsCountExceeds}
)

// The collection labels of upstream's count errors.
const (
	labelRefs       = "delivery tag topology refs"
	labelPartitions = "delivery tag partitions"
	labelUIDs       = "delivery tag partition uids"
)

// frameError is a decode error: upstream's text, matching ErrInvalidFrame.
func frameError(code status.Code, text string) *status.Error {
	return status.New(code, "access/node: "+text, errInvalidFrame)
}

// unknownOpError is HandleRPC's error for op: upstream's text, matching
// ErrUnknownOp.
func unknownOpError(op string) error {
	return fmt.Errorf("%w %q", ErrUnknownOp, op)
}

func init() {
	status.Register(registeredTagErrors...)
}
