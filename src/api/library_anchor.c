/* libmxq.so is assembled from the mxq_core archive (whole-archive); CMake needs one source here. */
typedef int mxq_library_anchor_unused;
