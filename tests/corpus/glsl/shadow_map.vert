#version 450
// Shadow mapping: light-space position computed per vertex.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(binding = 0) uniform Matrices { mat4 model; mat4 view_proj; mat4 light_view_proj; } m;
out vec4 v_light_pos;
out vec3 v_normal;
out float v_depth;
void main() {
    vec4 world = m.model * vec4(a_pos, 1.0);
    v_light_pos = m.light_view_proj * world;
    v_normal = mat3(m.model) * a_normal;
    gl_Position = m.view_proj * world;
    v_depth = gl_Position.z;
}
