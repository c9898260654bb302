// The translation unit that carries the lab's precompiled headers
// (cmake/Precompiled.cmake); it has no code of its own.
