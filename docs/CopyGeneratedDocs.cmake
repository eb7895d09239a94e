# Copies the Markdown that mlir-tblgen generated under SRC into DST, keeping
# relative paths and leaving CMake's own files behind.
file(GLOB_RECURSE generated RELATIVE ${SRC} ${SRC}/*.md)
foreach(doc ${generated})
  get_filename_component(dir ${DST}/${doc} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  configure_file(${SRC}/${doc} ${DST}/${doc} COPYONLY)
endforeach()
