#version 450
// Cube shadow map in one pass: the GS routes each triangle to six layers.
layout(location = 0) in vec3 a_pos;
layout(binding = 0) uniform M { mat4 model; } m;
out vec3 g_world;
void main() {
    vec4 w = m.model * vec4(a_pos, 1.0);
    g_world = w.xyz;
    gl_Position = w;
}
