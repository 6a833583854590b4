# MXQ.jl: Julia bindings of libmxq (MXFP8 quantization, grouped GEMM and attention).
#
# The ccall layer (LibMXQ.jl) is generated from include/mxq/mxq.h, so every C name, constant and
# doc applies as written; this file only says where the library is and turns a failing status into
# a Julia exception. The library path is read when the module is loaded (ENV["MXQ_LIBRARY"], else
# "libmxq" through the dynamic loader's search path), which is why precompilation is off: a cached
# image would freeze the path of the machine that built it.
__precompile__(false)

module MXQ

const libmxq = get(ENV, "MXQ_LIBRARY", "libmxq")

include("LibMXQ.jl")

"""
    MXQError(status, name, message)

A failed mxq call: the numeric status (unknown codes included, see `mxqStatus_t`), its symbolic
name and the library's detailed message for the calling thread.
"""
struct MXQError <: Exception
    status::mxqStatus_t
    name::String
    message::String
end

Base.showerror(io::IO, e::MXQError) = print(io, "mxq: ", e.name, " (", e.status, "): ", e.message)

"""
    check(status)

Return `nothing` for `MXQ_STATUS_SUCCESS`, otherwise throw an `MXQError` carrying the status and
`mxqGetLastErrorMessage()`. Call it right after the failing call, on the same thread.
"""
function check(status::Integer)
    status == MXQ_STATUS_SUCCESS && return nothing
    s = mxqStatus_t(status)
    throw(MXQError(s, unsafe_string(mxqGetStatusName(s)), unsafe_string(mxqGetLastErrorMessage())))
end

"""
    version()

The runtime library version (`mxqGetVersion()`) as a `VersionNumber`.
"""
function version()
    v = mxqGetVersion()
    return VersionNumber(v ÷ 10000, (v ÷ 100) % 100, v % 100)
end

export MXQError, check

end # module
