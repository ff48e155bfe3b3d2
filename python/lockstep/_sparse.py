"""onnxruntime's SparseTensor (COO and CSR), densified at the edge.

lockstep's kernels are dense, so a SparseTensor fed to a session (directly or as an OrtValue) becomes the dense
tensor it describes, zeros (empty strings for strings) everywhere else, before the run; onnxruntime instead takes
sparse feeds only for inputs declared as sparse tensors. Sparse tensors live on the host. Everything that would make
densifying impossible (indices out of range or repeated, a malformed CSR row index, a shape that is not 2-D for
CSR) is refused when the tensor is made, with lockstep.InvalidArgument.
"""

from enum import IntEnum

import numpy as np

from ._core import InvalidArgument, NotImplemented as _NotImplemented


class OrtSparseFormat(IntEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


def _read_only(array):
    """A read-only copy: a tensor's views do not change it, as onnxruntime's views are read-only."""
    copy = np.array(array)
    copy.flags.writeable = False
    return copy


def _check_host(ort_device, what):
    if ort_device is not None and ort_device.device_type() != 0:
        raise _NotImplemented(f"{what}: lockstep keeps sparse tensors on the host (a feed is densified and then "
                              "copied to the session's device); make it with OrtDevice.make('cpu', 0)")


def _index_array(values, what, name, ndim):
    array = np.asarray(values)
    if array.dtype != np.int64:
        raise InvalidArgument(f"{what}: {name} must be an int64 array, got {array.dtype}")
    if array.ndim not in ndim:
        raise InvalidArgument(f"{what}: {name} must have rank {' or '.join(map(str, ndim))}, got shape "
                              f"{list(array.shape)}")
    return array


def _check_positions(positions, size, what):
    if positions.size and (positions.min() < 0 or positions.max() >= size):
        bad = positions[(positions < 0) | (positions >= size)][0]
        raise InvalidArgument(f"{what}: index {int(bad)} is outside the {size} elements of the dense shape")
    unique, counts = np.unique(positions, return_counts=True)
    if (counts > 1).any():
        raise InvalidArgument(f"{what}: position {int(unique[counts > 1][0])} is given more than once, so the "
                              "tensor has no single dense form")


class _CooView:
    def __init__(self, indices):
        self._indices = indices

    def indices(self):
        return self._indices


class _CsrView:
    def __init__(self, inner, outer):
        self._inner, self._outer = inner, outer

    def inner(self):
        return self._inner

    def outer(self):
        return self._outer


class SparseTensor:
    """A sparse tensor as onnxruntime's Python API makes one: sparse_coo_from_numpy or sparse_csr_from_numpy."""

    def __init__(self, sparse_format, dense_shape, values, positions, **arrays):
        self._format = sparse_format
        self._shape = dense_shape
        self._values = _read_only(values)
        self._positions = positions  # flat row-major position of each value in the dense tensor
        self._arrays = {name: _read_only(a) for name, a in arrays.items()}

    @staticmethod
    def _values_and_shape(dense_shape, values, what):
        shape = [int(d) for d in np.asarray(dense_shape, dtype=np.int64).reshape(-1)]
        if any(d < 0 for d in shape):
            raise InvalidArgument(f"{what}: dense_shape {shape} has a negative dim")
        values = np.asarray(values)
        if values.ndim != 1:
            raise InvalidArgument(f"{what}: values must be 1-D, got shape {list(values.shape)}")
        return shape, values

    @classmethod
    def sparse_coo_from_numpy(cls, dense_shape, values, coo_indices, ort_device=None):
        """COO: `coo_indices` holds one flat (row-major) index per value, shape [NNZ], or one coordinate per value
        and dim, shape [NNZ, rank]."""
        what = "sparse_coo_from_numpy"
        _check_host(ort_device, what)
        shape, values = cls._values_and_shape(dense_shape, values, what)
        indices = _index_array(coo_indices, what, "coo_indices", (1, 2))
        if indices.shape[0] != values.size or (indices.ndim == 2 and indices.shape[1] != len(shape)):
            raise InvalidArgument(f"{what}: coo_indices of shape {list(indices.shape)} do not fit {values.size} "
                                  f"values of a rank-{len(shape)} tensor ([NNZ] or [NNZ, rank])")
        size = int(np.prod(shape, dtype=np.int64))
        if indices.ndim == 1:
            positions = indices
        else:
            for axis, dim in enumerate(shape):
                column = indices[:, axis]
                if column.size and (column.min() < 0 or column.max() >= dim):
                    raise InvalidArgument(f"{what}: a coordinate of dim {axis} is outside [0, {dim})")
            positions = (np.ravel_multi_index(tuple(indices.T), shape) if indices.size
                         else np.zeros(0, np.int64))
        _check_positions(positions, size, what)
        return cls(OrtSparseFormat.ORT_SPARSE_COO, shape, values, positions, indices=indices)

    @classmethod
    def sparse_csr_from_numpy(cls, dense_shape, values, inner_indices, outer_indices, ort_device=None):
        """CSR of a 2-D tensor: `inner_indices` holds each value's column, `outer_indices` (rows + 1 entries,
        non-decreasing, from 0 to NNZ) where each row's values start."""
        what = "sparse_csr_from_numpy"
        _check_host(ort_device, what)
        shape, values = cls._values_and_shape(dense_shape, values, what)
        if len(shape) != 2:
            raise InvalidArgument(f"{what}: CSR describes 2-D tensors, got dense_shape {shape}")
        inner = _index_array(inner_indices, what, "inner_indices", (1,))
        outer = _index_array(outer_indices, what, "outer_indices", (1,))
        rows, cols = shape
        if inner.size != values.size:
            raise InvalidArgument(f"{what}: {inner.size} inner indices for {values.size} values")
        if values.size and (outer.size != rows + 1 or outer[0] != 0 or outer[-1] != values.size
                            or (np.diff(outer) < 0).any()):
            raise InvalidArgument(f"{what}: outer_indices must hold {rows + 1} non-decreasing offsets from 0 to "
                                  f"{values.size}, got {outer.tolist()}")
        if inner.size and (inner.min() < 0 or inner.max() >= cols):
            raise InvalidArgument(f"{what}: a column index is outside [0, {cols})")
        row_of = np.repeat(np.arange(rows, dtype=np.int64), np.diff(outer)) if values.size else inner
        positions = row_of * cols + inner
        _check_positions(positions, rows * cols, what)
        return cls(OrtSparseFormat.ORT_SPARSE_CSRC, shape, values, positions, inner=inner, outer=outer)

    def values(self):
        return self._values

    def format(self):
        return self._format

    def dense_shape(self):
        return list(self._shape)

    def data_type(self):
        kind = "string" if self._values.dtype.kind in "OSU" else {
            np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(self._values.dtype, str(self._values.dtype))
        return f"sparse_tensor({kind})"

    def device_name(self):
        return "cpu"

    def as_coo_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_COO:
            raise InvalidArgument("This sparse tensor does not contain COO format")
        return _CooView(self._arrays["indices"])

    def as_csrc_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise InvalidArgument("This sparse tensor does not contain CSR(C) format")
        return _CsrView(self._arrays["inner"], self._arrays["outer"])

    def as_blocksparse_view(self):
        raise InvalidArgument("This sparse tensor does not contain BlockSparse format (lockstep makes COO and CSR)")

    def to_cuda(self, ort_device):
        _check_host(ort_device, "SparseTensor.to_cuda")
        return self

    def to_dense(self, what="the sparse tensor"):
        """The dense numpy array this tensor describes (a lockstep extension; feeds are densified with it)."""
        strings = self._values.dtype.kind in "OSU"
        dtype = object if strings else self._values.dtype
        try:
            dense = np.full(self._shape, "" if strings else 0, dtype=dtype)
        except (MemoryError, ValueError) as error:
            raise InvalidArgument(f"{what}: the sparse tensor of dense shape {self._shape} cannot be densified "
                                  f"({error})") from None
        dense.reshape(-1)[self._positions] = self._values
        return dense

    def __repr__(self):
        return f"SparseTensor({self._format.name}, {self.data_type()}, dense_shape={self._shape}, nnz={self._values.size})"
