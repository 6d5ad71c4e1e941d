#version 450
// Quad-patch displacement mapping: VS passes position, normal and UV through.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
out vec3 c_normal;
out vec2 c_uv;
void main() {
    c_normal = a_normal;
    c_uv = a_uv;
    gl_Position = vec4(a_pos, 1.0);
}
