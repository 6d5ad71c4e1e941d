#version 450
// Terrain tessellation: VS passes control points and a per-vertex LOD distance.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec2 a_uv;
layout(binding = 0) uniform Cam { mat4 view_proj; vec3 eye; } cam;
out vec2 tc_uv;
out float tc_dist;
void main() {
    tc_uv = a_uv;
    tc_dist = distance(a_pos, cam.eye);
    gl_Position = vec4(a_pos, 1.0);
}
